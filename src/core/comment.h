/* Text that lands in a `#` comment line of a file the export writes (a script, the hub's
 * cloud-init user-data, an nftables ruleset, a wg-quick, swanctl, tinc, OpenVPN or nebula
 * config, README.md): the lab's name and the run's id come from results.json, which someone
 * else may have written. A newline in them would end the comment and make the rest a line of
 * its own: a command in a script, a rule in a ruleset. */
#pragma once

/* text safe for the rest of one comment line: every control character (a newline, a carriage
 * return, a tab, C1's NEL), every byte that is not UTF-8, and Unicode's line and paragraph
 * separators (YAML 1.1 breaks lines at them) written as \xHH or \uHHHH, and a backslash as two,
 * so no line continues or ends inside it. Printable text is kept as it is. */
char *ml_comment_text(const char *text);
