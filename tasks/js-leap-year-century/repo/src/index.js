'use strict';
const { isLeapYear } = require('./leap');

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in `month` (1-12) of `year`. */
function daysInMonth(year, month) {
  if (month < 1 || month > 12) throw new RangeError(`month ${month}`);
  return month === 2 && isLeapYear(year) ? 29 : DAYS[month - 1];
}

module.exports = { daysInMonth, isLeapYear };
