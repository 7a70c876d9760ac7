'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { camelCase, kebabCase } = require('../src');

describe('camelCase', () => {
  it('dashes', () => {
    assert.equal(camelCase('foo-bar-baz'), 'fooBarBaz');
  });
  it('underscores and spaces', () => {
    assert.equal(camelCase('foo_bar baz'), 'fooBarBaz');
  });
  it('already camel', () => {
    assert.equal(camelCase('fooBar'), 'fooBar');
  });
  it('leading separators', () => {
    assert.equal(camelCase('--foo-bar'), 'fooBar');
    assert.equal(camelCase('_private_name'), 'privateName');
  });
  it('leading spaces', () => {
    assert.equal(camelCase('  hello world'), 'helloWorld');
  });
});

describe('kebabCase', () => {
  it('from camel', () => {
    assert.equal(kebabCase('fooBarBaz'), 'foo-bar-baz');
  });
});
