'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { daysInMonth, isLeapYear } = require('../src');

describe('isLeapYear', () => {
  it('ordinary years', () => {
    assert.equal(isLeapYear(2024), true);
    assert.equal(isLeapYear(2023), false);
  });
  it('year 2000', () => {
    assert.equal(isLeapYear(2000), true);
  });
});

describe('daysInMonth', () => {
  it('31 and 30 day months', () => {
    assert.equal(daysInMonth(2023, 1), 31);
    assert.equal(daysInMonth(2023, 4), 30);
  });
  it('february 2024', () => {
    assert.equal(daysInMonth(2024, 2), 29);
  });
});
