'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { zip } = require('../src');

describe('zip', () => {
  it('pairs items', () => {
    assert.deepEqual(zip([1, 2, 3], ['a', 'b']), [[1, 'a'], [2, 'b']]);
  });
});
