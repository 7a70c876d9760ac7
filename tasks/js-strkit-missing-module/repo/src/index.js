'use strict';
const { padStart, padEnd } = require('./pad');
const { truncate } = require('./truncate');

module.exports = { padStart, padEnd, truncate };
