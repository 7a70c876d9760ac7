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
  it('three items at 0.29', () => {
    assert.equal(cartTotal([{ price: 0.29, qty: 3 }]), '0.87');
  });
  it('qty defaults to 1', () => {
    assert.equal(cartTotal([{ price: 1.5 }, { price: 2, qty: 2 }]), '5.50');
  });
});
