'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { get, set } = require('../src');

describe('get', () => {
  it('reads nested keys', () => {
    assert.equal(get({ a: { b: { c: 1 } } }, 'a.b.c'), 1);
  });
  it('missing key gives the fallback', () => {
    assert.equal(get({ a: {} }, 'a.b.c', 'none'), 'none');
  });
  it('array indexes', () => {
    assert.equal(get({ list: [{ id: 7 }] }, ['list', 0, 'id']), 7);
  });
  it('keeps falsy values', () => {
    assert.equal(get({ retries: 0 }, 'retries', 3), 0);
    assert.equal(get({ on: false }, 'on', true), false);
    assert.equal(get({ name: '' }, 'name', 'x'), '');
  });
  it('null along the path gives the fallback', () => {
    assert.equal(get({ a: null }, 'a.b', 'x'), 'x');
  });
});

describe('set', () => {
  it('creates intermediate objects', () => {
    assert.deepEqual(set({}, 'a.b', 2), { a: { b: 2 } });
  });
});
