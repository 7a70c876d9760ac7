'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { truncate } = require('../src/truncate');

describe('truncate', () => {
  it('short strings unchanged', () => {
    assert.equal(truncate('abc', 5), 'abc');
  });
  it('adds an ellipsis', () => {
    assert.equal(truncate('abcdef', 4), 'abc…');
  });
});
