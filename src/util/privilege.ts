// Whether this process acts as root. Either id counts: with the real uid
// unprivileged and the effective one 0 (a setuid wrapper, `setpriv
// --euid=0`), files are opened as root and children start as root, so the
// root rules (refusal, trusted checks files) apply just the same.

/** 0 when the real or the effective uid is 0, else the effective uid (-1 where there are none). */
export function actingUid(): number {
  const uid = process.getuid?.() ?? -1;
  const euid = process.geteuid?.() ?? uid;
  return uid === 0 || euid === 0 ? 0 : euid;
}
