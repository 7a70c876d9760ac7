'use strict';

/** Euros (a number with at most two decimals) to integer cents. */
function toCents(euros) {
  return Math.round(euros * 100);
}

/** Integer cents as a '12.34' string. */
function formatCents(cents) {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

module.exports = { toCents, formatCents };
