'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { Emitter } = require('../lib/emitter');

describe('Emitter', () => {
  it('calls listeners in order', () => {
    const seen = [];
    const e = new Emitter().on('x', () => seen.push(1)).on('x', () => seen.push(2));
    e.emit('x');
    assert.deepEqual(seen, [1, 2]);
  });
  it('once fires a single time', () => {
    let count = 0;
    const e = new Emitter().once('x', () => count++);
    e.emit('x');
    e.emit('x');
    assert.equal(count, 1);
  });
  it('off removes a listener', () => {
    let count = 0;
    const fn = () => count++;
    const e = new Emitter().on('x', fn);
    e.off('x', fn).emit('x');
    assert.equal(count, 0);
  });
  it('emit returns whether anyone listened', () => {
    const e = new Emitter();
    assert.equal(e.emit('x'), false);
    e.on('x', () => {});
    assert.equal(e.emit('x'), true);
  });
  it('once does not skip the next listener', () => {
    const seen = [];
    const e = new Emitter();
    e.once('ready', () => seen.push('a'));
    e.on('ready', () => seen.push('b'));
    e.emit('ready');
    assert.deepEqual(seen, ['a', 'b']);
  });
  it('off inside a listener keeps the others', () => {
    const seen = [];
    const e = new Emitter();
    const self = () => {
      seen.push('self');
      e.off('x', self);
    };
    e.on('x', self).on('x', () => seen.push('other'));
    e.emit('x');
    assert.deepEqual(seen, ['self', 'other']);
  });
});
