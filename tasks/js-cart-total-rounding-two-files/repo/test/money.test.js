'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { toCents, formatCents } = require('../lib/money');

describe('money', () => {
  it('formats cents', () => {
    assert.equal(formatCents(1234), '12.34');
    assert.equal(formatCents(5), '0.05');
  });
  it('toCents of whole euros', () => {
    assert.equal(toCents(3), 300);
  });
});
