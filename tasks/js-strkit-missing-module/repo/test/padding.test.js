'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { padStart, padEnd } = require('../src/padding');

describe('padding', () => {
  it('padStart', () => {
    assert.equal(padStart(7, 3, '0'), '007');
  });
  it('padEnd', () => {
    assert.equal(padEnd('ab', 4), 'ab  ');
  });
});
