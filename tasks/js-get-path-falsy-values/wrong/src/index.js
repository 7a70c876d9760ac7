'use strict';

function split(path) {
  return Array.isArray(path) ? path : String(path).split('.');
}

/** The value at a dotted `path` (or array of keys), or `fallback` when it is missing. */
function get(object, path, fallback) {
  let value = object;
  for (const key of split(path)) {
    if (value === undefined) return fallback;
    value = value[key];
  }
  return value === undefined ? fallback : value;
}

/** Sets the value at `path`, creating plain objects on the way; returns `object`. */
function set(object, path, value) {
  const keys = split(path);
  let target = object;
  for (const key of keys.slice(0, -1)) {
    if (typeof target[key] !== 'object' || target[key] === null) target[key] = {};
    target = target[key];
  }
  target[keys[keys.length - 1]] = value;
  return object;
}

module.exports = { get, set };
