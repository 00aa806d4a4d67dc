'use strict';

function countWords(text) {
  return text.split(' ').length;
}

function longestWord(text) {
  return text.split(/\s+/).reduce((best, w) => (w.length > best.length ? w : best), '');
}

module.exports = { countWords, longestWord };
