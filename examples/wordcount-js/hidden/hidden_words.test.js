const test = require('node:test');
const assert = require('node:assert');
const { countWords } = require('../src/words.js');

test('hidden: empty and blank text', () => {
  assert.strictEqual(countWords(''), 0);
  assert.strictEqual(countWords('   '), 0);
});

test('hidden: tabs and newlines separate words', () => {
  assert.strictEqual(countWords('one\ttwo\nthree'), 3);
});
