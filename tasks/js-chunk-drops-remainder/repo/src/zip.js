'use strict';

/** Pairs items at the same index; stops at the shorter array. */
function zip(left, right) {
  const length = Math.min(left.length, right.length);
  return Array.from({ length }, (_, i) => [left[i], right[i]]);
}

module.exports = { zip };
