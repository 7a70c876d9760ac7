'use strict';
const { toCents, formatCents } = require('./money');

/** The total of `items` ({price, qty = 1}) after an optional percent discount, as '12.34'. */
function cartTotal(items, discountPercent = 0) {
  let euros = 0;
  for (const item of items) euros += item.price * item.qty;
  const discounted = euros * (1 - discountPercent / 100);
  return formatCents(toCents(discounted));
}

module.exports = { cartTotal };
