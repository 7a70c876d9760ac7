'use strict';

/** 'foo-bar_baz qux' → 'fooBarBazQux'. */
function camelCase(text) {
  return text
    .split(/[-_ ]/)
    .map((word, i) => (i === 0 ? word.charAt(0).toLowerCase() + word.slice(1) : word.charAt(0).toUpperCase() + word.slice(1)))
    .join('');
}

/** 'fooBarBaz' → 'foo-bar-baz'. */
function kebabCase(text) {
  return text.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}

module.exports = { camelCase, kebabCase };
