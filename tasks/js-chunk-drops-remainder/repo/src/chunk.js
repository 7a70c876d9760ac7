'use strict';

/** Splits `items` into arrays of `size` items (the last one may be shorter). */
function chunk(items, size) {
  if (!Number.isInteger(size) || size < 1) throw new RangeError('size must be a positive integer');
  const chunks = [];
  for (let start = 0; start + size <= items.length; start += size) {
    chunks.push(items.slice(start, start + size));
  }
  return chunks;
}

module.exports = { chunk };
