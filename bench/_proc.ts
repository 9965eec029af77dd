/**
 * The processes of a process group, read from `/proc` (Linux): what the
 * benchmarks measure a browser by.
 *
 * @module
 */

/** One process of the group: its pid and its `stat` fields after the command name. */
export interface GroupProcess {
  /** The pid. */
  pid: number;
  /** `/proc/<pid>/stat` past `(comm) `: field 0 is the state, 11 and 12 user and system ticks. */
  stat: string[];
}

/**
 * Lists the live processes whose process group is `group`.
 *
 * @param group the group id (the leader's pid)
 * @returns the processes, as they are found; one that ends meanwhile is skipped
 */
export async function* groupProcesses(group: number): AsyncGenerator<GroupProcess> {
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    let stat: string;
    try {
      stat = await Deno.readTextFile(`/proc/${entry.name}/stat`);
    } catch {
      continue; // The process ended meanwhile.
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === group) yield { pid: Number(entry.name), stat: fields };
  }
}

/**
 * The proportional set size (PSS) of a process group: its processes' own
 * pages, shared ones split among their sharers (`/proc/<pid>/smaps_rollup`).
 *
 * @param group the group id (the leader's pid)
 * @returns bytes
 */
export async function groupPss(group: number): Promise<number> {
  let pss = 0;
  for await (const { pid } of groupProcesses(group)) {
    try {
      const rollup = await Deno.readTextFile(`/proc/${pid}/smaps_rollup`);
      pss += Number(rollup.match(/^Pss:\s+(\d+) kB/m)?.[1] ?? 0) * 1024;
    } catch {
      continue; // The process ended meanwhile.
    }
  }
  return pss;
}
