'use strict';

function isLeapYear(year) {
  return year % 4 === 0;
}

module.exports = { isLeapYear };
