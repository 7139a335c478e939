#!/usr/bin/env bash
# A throwaway Nagios 4 (Debian's nagios4-core, 4.4.6) whose checks and event
# handlers go through the Mod-Gearman 3.3.3 broker module to a gearmand, for
# test/gearman/gearman-nagios.test.ts:
#
#   nagios-lab.sh up DIR PORT KEY   writes DIR/etc, starts Nagios (gearmand on 127.0.0.1:PORT, key KEY)
#   nagios-lab.sh down DIR          stops the Nagios started in DIR
#
# One host, labhost (check_dummy 0 "host is up"), and five services, each
# checked every $CHECK_INTERVAL seconds (default 5) with one attempt:
#   svc_ok         check_dummy 0 "all fine"
#   svc_warn       check_dummy 1 "somewhat bad"
#   svc_crit       check_dummy 2 "very bad"; its event handler appends
#                  "svc_crit CRITICAL HARD" (service, state, state type) to DIR/eventhandler.out
#   svc_multiline  three lines of output, perfdata on the first and the last, backslashes; exit 1
#   svc_timeout    sleeps 10 s, past service_check_timeout=3
# Results: DIR/var/status.dat; logs: DIR/var/nagios.log, DIR/var/mod_gearman_neb.log.
#
# As root, Nagios runs as the user nagios and DIR becomes that user's: every
# directory above DIR must let it through (a mktemp -d one is 0700: chmod 755 it).
# The broker module is $MG_NEB_NAGIOS4, else what build-mod-gearman.sh builds;
# it is copied into DIR, so the build cache may stay private.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
NAGIOS=/usr/sbin/nagios4
PLUGINS=/usr/lib/nagios/plugins

die() { echo "nagios-lab: $*" >&2; exit 1; }
usage() { echo "usage: nagios-lab.sh up DIR PORT KEY | down DIR" >&2; exit 64; }

# The pid in DIR's lock file, if that process is still a Nagios of DIR's config.
running_pid() {
  local lock=$1/var/nagios.lock pid
  [ -s "$lock" ] || return 1
  pid=$(cat "$lock")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  # A stale lock's pid may belong to some other process by now.
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$1/etc/nagios.cfg" || return 1
  echo "$pid"
}

lab_down() {
  local dir=$1 pid i
  [ -d "$dir" ] || return 0
  dir=$(cd "$dir" && pwd -P)
  if pid=$(running_pid "$dir"); then
    kill -TERM "$pid" 2>/dev/null || true
    # The module stops its result thread first: allow a few seconds.
    for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    echo "nagios-lab: stopped Nagios $pid"
  fi
  # Its check workers are sessions of their own; those of a Nagios that had to
  # be killed would linger until they notice the closed socket.
  local p argv
  for p in /proc/[0-9]*; do
    mapfile -d '' -t argv 2>/dev/null <"$p/cmdline" || continue
    [ "${argv[*]}" = "$NAGIOS --worker $dir/var/rw/nagios.qh" ] || continue
    kill -KILL "${p#/proc/}" 2>/dev/null || true
  done
  rm -f "$dir/var/nagios.lock"
}

write_config() { # write_config DIR PORT KEY MODULE USER GROUP
  local dir=$1 port=$2 key=$3 module=$4 user=$5 group=$6 every=${CHECK_INTERVAL:-5}
  local etc=$dir/etc var=$dir/var bin=$dir/libexec

  install -m 644 "$module" "$bin/mod_gearman_nagios4.o"

  # The plugin's lines are what the test compares, byte for byte.
  cat >"$bin/three_lines" <<'EOF'
#!/bin/sh
printf '%s\n' 'first line C:\temp|time=0.01s;1;2;0 size=12B' \
  'second line with a \ backslash' 'third line|extra=1;;;0;10'
exit 1
EOF
  # Run by the worker; writes beside libexec/, so no path is baked in.
  cat >"$bin/record_event" <<'EOF'
#!/bin/sh
echo "$*" >>"$(dirname "$0")/../eventhandler.out"
EOF
  chmod 755 "$bin/three_lines" "$bin/record_event"

  # The key is in here: readable by Nagios only.
  (umask 077 && cat >"$etc/mod_gearman.conf") <<EOF
server=127.0.0.1:$port
encryption=yes
key=$key
hosts=yes
services=yes
eventhandler=yes
notifications=no
do_hostchecks=yes
result_queue=check_results
result_workers=1
logfile=$var/mod_gearman_neb.log
debug=0
EOF

  cat >"$etc/nagios.cfg" <<EOF
# Everything Nagios writes stays under $dir.
cfg_file=$etc/objects.cfg
log_file=$var/nagios.log
debug_file=$var/nagios.debug
debug_level=0
lock_file=$var/nagios.lock
status_file=$var/status.dat
status_update_interval=1
temp_file=$var/nagios.tmp
temp_path=$var/tmp
object_cache_file=$var/objects.cache
precached_object_file=$var/objects.precache
state_retention_file=$var/retention.dat
retain_state_information=0
check_result_path=$var/spool/checkresults
check_result_reaper_frequency=1
query_socket=$var/rw/nagios.qh
command_file=$var/rw/nagios.cmd
check_external_commands=0
nagios_user=$user
nagios_group=$group
use_syslog=0
# Intervals in seconds, every check scheduled at once, no cached host results
# (with a cache Nagios 4.4.6 sends the module a host check once only).
interval_length=1
max_service_check_spread=1
max_host_check_spread=1
service_inter_check_delay_method=n
host_inter_check_delay_method=n
cached_host_check_horizon=0
service_check_timeout=3
host_check_timeout=3
event_handler_timeout=10
enable_event_handlers=1
enable_notifications=0
enable_flap_detection=0
# The module runs the checks; one core worker is plenty.
check_workers=1
illegal_macro_output_chars=\`~\$&|'"<>
event_broker_options=-1
broker_module=$bin/mod_gearman_nagios4.o config=$etc/mod_gearman.conf
EOF

  cat >"$etc/objects.cfg" <<EOF
define timeperiod {
  timeperiod_name  always
  alias            always
  monday           00:00-24:00
  tuesday          00:00-24:00
  wednesday        00:00-24:00
  thursday         00:00-24:00
  friday           00:00-24:00
  saturday         00:00-24:00
  sunday           00:00-24:00
}
define command {
  command_name  dummy
  command_line  $PLUGINS/check_dummy \$ARG1\$ "\$ARG2\$"
}
define command {
  command_name  three_lines
  command_line  $bin/three_lines
}
define command {
  command_name  sleep_10
  command_line  /bin/sleep 10
}
define command {
  command_name  record_event
  command_line  $bin/record_event \$SERVICEDESC\$ \$SERVICESTATE\$ \$SERVICESTATETYPE\$
}
define contact {
  contact_name                   nobody_here
  host_notifications_enabled     0
  service_notifications_enabled  0
  host_notification_period       always
  service_notification_period    always
  host_notification_options      n
  service_notification_options   n
  host_notification_commands     dummy!0!unused
  service_notification_commands  dummy!0!unused
}
define host {
  host_name              labhost
  address                127.0.0.1
  check_command          dummy!0!host is up
  check_interval         $every
  retry_interval         $every
  max_check_attempts     1
  check_period           always
  contacts               nobody_here
  notification_period    always
  notifications_enabled  0
}
define service {
  name                   lab_service
  register               0
  host_name              labhost
  check_interval         $every
  retry_interval         $every
  max_check_attempts     1
  check_period           always
  contacts               nobody_here
  notification_period    always
  notifications_enabled  0
}
define service {
  use                  lab_service
  service_description  svc_ok
  check_command        dummy!0!all fine
}
define service {
  use                  lab_service
  service_description  svc_warn
  check_command        dummy!1!somewhat bad
}
define service {
  use                    lab_service
  service_description    svc_crit
  check_command          dummy!2!very bad
  event_handler          record_event
  event_handler_enabled  1
}
define service {
  use                  lab_service
  service_description  svc_multiline
  check_command        three_lines
}
define service {
  use                  lab_service
  service_description  svc_timeout
  check_command        sleep_10
}
EOF
}

lab_up() {
  local dir=$1 port=$2 key=$3 module user group as_user=() i peers
  [[ $port =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] || die "bad port: $port"
  [[ $key =~ ^[[:graph:]]+$ ]] || die "the key must be printable, without blanks"
  [ -x "$NAGIOS" ] || die "$NAGIOS is missing (apt-get install --no-install-recommends nagios4-core)"
  [ -x "$PLUGINS/check_dummy" ] || die "$PLUGINS/check_dummy is missing (monitoring-plugins-basic)"

  module=${MG_NEB_NAGIOS4:-}
  if [ -z "$module" ]; then
    peers=$("$here/build-mod-gearman.sh") || die "cannot build the broker module"
    module=$(sed -n 's/^MG_NEB_NAGIOS4=//p' <<<"$peers")
  fi
  [ -f "$module" ] || die "no broker module at ${module:-(none)}"

  # Paths go into Nagios config and command lines unquoted (';' starts a comment there).
  [[ $dir =~ ^[A-Za-z0-9._/-]+$ ]] || die "DIR may hold only letters, digits and . _ / - ($dir)"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd -P)
  [[ $dir =~ ^[A-Za-z0-9._/-]+$ ]] || die "DIR may hold only letters, digits and . _ / - ($dir)"
  if i=$(running_pid "$dir"); then die "a Nagios already runs in $dir (pid $i)"; fi
  rm -rf "$dir/etc" "$dir/libexec" "$dir/var" "$dir/eventhandler.out"
  mkdir -p "$dir/etc" "$dir/libexec" "$dir/var/tmp" "$dir/var/rw" "$dir/var/spool/checkresults"

  if [ "$(id -u)" = 0 ]; then
    id nagios >/dev/null 2>&1 || die "no user nagios (nagios4-core creates it)"
    user=nagios
    group=$(id -gn nagios)
    as_user=(setpriv --reuid=nagios --regid="$group" --init-groups --)
  else
    user=$(id -un)
    group=$(id -gn)
  fi
  write_config "$dir" "$port" "$key" "$module" "$user" "$group"
  if [ ${#as_user[@]} -gt 0 ]; then
    chown -R "$user:$group" "$dir"
    "${as_user[@]}" test -r "$dir/etc/nagios.cfg" ||
      die "user $user cannot reach $dir: a directory above it is closed to it (chmod 755 it)"
  fi

  "${as_user[@]}" "$NAGIOS" -v "$dir/etc/nagios.cfg" >"$dir/var/verify.out" 2>&1 || {
    tail -n 20 "$dir/var/verify.out" >&2
    die "Nagios refuses the configuration (all of it: $dir/var/verify.out)"
  }
  "${as_user[@]}" "$NAGIOS" -d "$dir/etc/nagios.cfg"
  for ((i = 0; i < 100; i++)); do running_pid "$dir" >/dev/null && break; sleep 0.1; done
  i=$(running_pid "$dir") || { tail -n 20 "$dir/var/nagios.log" >&2 2>/dev/null; die "Nagios did not start"; }
  echo "nagios-lab: Nagios $i in $dir, broker module to 127.0.0.1:$port"
}

case ${1:-} in
up) [ $# = 4 ] || usage; lab_up "$2" "$3" "$4" ;;
down) [ $# = 2 ] || usage; lab_down "$2" ;;
*) usage ;;
esac
