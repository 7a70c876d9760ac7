'use strict';

/** At most `max` characters; a cut string ends with '…'. */
function truncate(text, max) {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

module.exports = { truncate };
