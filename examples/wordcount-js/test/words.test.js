const test = require('node:test');
const assert = require('node:assert');
const { countWords, longestWord } = require('../src/words.js');

test('counts simple words', () => {
  assert.strictEqual(countWords('a b c'), 3);
});

test('counts words separated by several spaces', () => {
  assert.strictEqual(countWords('  hello   world '), 2);
});

test('finds the longest word', () => {
  assert.strictEqual(longestWord('a bb ccc'), 'ccc');
});
