'use strict';
const { toCents, formatCents } = require('./money');

/** The total of `items` ({price, qty = 1}) after an optional percent discount, as '12.34'. */
function cartTotal(items, discountPercent = 0) {
  let cents = 0;
  for (const item of items) cents += toCents(item.price) * (item.qty ?? 1);
  const discount = Math.round((cents * discountPercent) / 100);
  return formatCents(cents - discount);
}

module.exports = { cartTotal };
