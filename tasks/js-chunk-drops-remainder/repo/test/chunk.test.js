'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { chunk } = require('../src');

describe('chunk', () => {
  it('splits evenly', () => {
    assert.deepEqual(chunk([1, 2, 3, 4], 2), [[1, 2], [3, 4]]);
  });
  it('empty array', () => {
    assert.deepEqual(chunk([], 3), []);
  });
  it('rejects a size below 1', () => {
    assert.throws(() => chunk([1], 0), RangeError);
  });
});
