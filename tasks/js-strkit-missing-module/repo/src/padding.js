'use strict';

function padStart(text, width, fill = ' ') {
  const s = String(text);
  return s.length >= width ? s : fill.repeat(width - s.length) + s;
}

function padEnd(text, width, fill = ' ') {
  const s = String(text);
  return s.length >= width ? s : s + fill.repeat(width - s.length);
}

module.exports = { padStart, padEnd };
