'use strict';

class Emitter {
  constructor() {
    this.listeners = new Map();
  }

  on(event, fn) {
    if (!this.listeners.has(event)) this.listeners.set(event, []);
    this.listeners.get(event).push(fn);
    return this;
  }

  once(event, fn) {
    const wrapper = (...args) => {
      this.off(event, wrapper);
      fn(...args);
    };
    return this.on(event, wrapper);
  }

  off(event, fn) {
    const list = this.listeners.get(event);
    if (!list) return this;
    const index = list.indexOf(fn);
    if (index !== -1) list.splice(index, 1);
    return this;
  }

  /** Calls every listener of `event`; true when there was at least one. */
  emit(event, ...args) {
    const list = this.listeners.get(event);
    if (!list || list.length === 0) return false;
    for (const fn of [...list]) fn(...args);
    return true;
  }
}

module.exports = { Emitter };
