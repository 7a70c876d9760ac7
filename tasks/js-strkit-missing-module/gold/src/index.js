'use strict';
const { padStart, padEnd } = require('./padding');
const { truncate } = require('./truncate');

module.exports = { padStart, padEnd, truncate };
