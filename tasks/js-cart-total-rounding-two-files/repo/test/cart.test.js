'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { cartTotal } = require('../lib/cart');

describe('cart', () => {
  it('empty cart', () => {
    assert.equal(cartTotal([]), '0.00');
  });
  it('quantities multiply', () => {
    assert.equal(cartTotal([{ price: 2.5, qty: 4 }]), '10.00');
  });
  it('percent discount', () => {
    assert.equal(cartTotal([{ price: 20, qty: 1 }], 25), '15.00');
  });
});
