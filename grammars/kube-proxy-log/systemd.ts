/**
 * `systemctl status` around a journal tail: the unit line, its properties, the cgroup tree and the
 * ellipsis hint, as systemd's src/systemctl/systemctl-show.c prints them (any locale prints these
 * property names untranslated).
 */
export const SYSTEMD_STATUS =
  /^\s*(?:[●○×*↻]\s*)?[\w@.\\-]+\.(?:service|scope|slice)(?:\s+-\s+.*)?$|^\s*(?:Loaded|Active|Docs|Process|Main PID|Tasks|Memory|CPU|CGroup|Drop-In|TriggeredBy|Status|IP|IO|Invocation|Mem peak|Warning):\s|^\s*[│├└|`]\s*[─-]+\s*\d+\s|^Hint: Some lines were ellipsized/;
