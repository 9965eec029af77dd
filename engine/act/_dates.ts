/**
 * What a person types into a date, time, datetime-local, month or week
 * field, read as the value the input takes: "8:22 AM" as `08:22`,
 * "09/10/2012" as `2012-09-10` in a month-first locale (`2012-10-09` in a
 * day-first one), "Sep 10, 2012", "10. September 2012", "September 2012",
 * "Week 37, 2012". The page's locale decides the order of day and month in
 * numeric dates; month names are read in English and in that locale. The
 * input's own format always reads.
 *
 * @module
 */

/** The input types whose value this module reads people's text into. */
const DATE_LIKE = /^(date|time|datetime-local|month|week)$/;

/**
 * Whether an input type takes a date or time value.
 *
 * @param type the input's `type`, lowercased
 * @returns whether it is date, time, datetime-local, month or week
 */
export function isDateLike(type: string): boolean {
  return DATE_LIKE.test(type);
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** Whether the locale writes numeric dates month first (en-US), else day first, or year first. */
function numericOrder(locale: string): "mdy" | "dmy" | "ymd" {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat(locale, { year: "numeric", month: "2-digit", day: "2-digit" })
      .formatToParts(new Date(2012, 8, 10));
  } catch {
    return "mdy";
  }
  const order = parts.filter((p) => p.type === "year" || p.type === "month" || p.type === "day")
    .map((p) => p.type[0]).join("");
  return order === "dmy" || order === "ymd" ? order : "mdy";
}

/** Month names, lowercased and without dots, to their number: English and the locale's. */
function monthNames(locale: string): Map<string, number> {
  const names = new Map<string, number>();
  for (const lang of ["en", locale]) {
    for (const month of ["long", "short"] as const) {
      let format: Intl.DateTimeFormat;
      try {
        format = new Intl.DateTimeFormat(lang, { month });
      } catch {
        continue;
      }
      for (let m = 0; m < 12; m++) {
        const name = format.format(new Date(2012, m, 15)).toLowerCase().replace(/\./g, "");
        if (!names.has(name)) names.set(name, m + 1);
      }
    }
  }
  names.set("sept", 9);
  return names;
}

/** A real calendar date, as `YYYY-MM-DD`. */
function ymd(year: number, month: number, day: number): string | undefined {
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1) return undefined;
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > last) return undefined;
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
}

/** A two-digit year as a person means it: 00-69 in 2000s, 70-99 in 1900s. */
function fullYear(text: string): number {
  const year = Number(text);
  return text.length <= 2 ? (year < 70 ? 2000 + year : 1900 + year) : year;
}

/** Reads a date: ISO, numeric in the locale's order, or with a month name. */
export function readDate(text: string, locale: string): string | undefined {
  const t = text.trim().replace(/\s+/g, " ");
  let m = t.match(/^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/);
  if (m) return ymd(Number(m[1]), Number(m[2]), Number(m[3]));
  m = t.match(/^(\d{1,2})[-/. ](\d{1,2})[-/. ](\d{2}|\d{4})\.?$/);
  if (m) {
    const [a, b, year] = [Number(m[1]), Number(m[2]), fullYear(m[3]!)];
    // Dotted dates are day first wherever they are written.
    const dayFirst = t.includes(".") || numericOrder(locale) === "dmy";
    return dayFirst ? ymd(year, b, a) : ymd(year, a, b);
  }
  const names = monthNames(locale);
  const words = t.toLowerCase().replace(/[,.]/g, " ").replace(/(\d)(st|nd|rd|th)\b/g, "$1")
    .split(" ").filter((w) => w && w !== "of" && w !== "de");
  let month: number | undefined;
  const numbers: string[] = [];
  for (const word of words) {
    if (/^\d+$/.test(word)) numbers.push(word);
    else if (names.has(word)) month = names.get(word);
    else if (!/^(mon|tue|wed|thu|fri|sat|sun)[a-z]*$/.test(word)) return undefined;
  }
  if (month === undefined || numbers.length !== 2) return undefined;
  const yearIndex = numbers.findIndex((n) => n.length === 4);
  const year = yearIndex === -1 ? fullYear(numbers[1]!) : Number(numbers[yearIndex]);
  const day = Number(numbers[yearIndex === 0 ? 1 : 0]);
  return ymd(year, month, day);
}

/** Reads a time: 24-hour, or 12-hour with am/pm; seconds kept when given. */
export function readTime(text: string): string | undefined {
  const t = text.trim().toLowerCase().replace(/\s+/g, " ");
  const m = t.match(/^(\d{1,2})(?:[:.h](\d{2}))?(?::(\d{2}))?(?: ?([ap])\.? ?m?\.?)?$/);
  if (!m) return undefined;
  let hour = Number(m[1]);
  const minute = m[2] === undefined ? 0 : Number(m[2]);
  const second = m[3] === undefined ? undefined : Number(m[3]);
  const half = m[4];
  // A bare number is a time only with am/pm ("8 AM"); "8" alone is not.
  if (m[2] === undefined && half === undefined) return undefined;
  if (half !== undefined) {
    if (hour < 1 || hour > 12) return undefined;
    hour = (hour % 12) + (half === "p" ? 12 : 0);
  }
  if (hour > 23 || minute > 59 || (second !== undefined && second > 59)) return undefined;
  return `${pad(hour)}:${pad(minute)}${second === undefined ? "" : `:${pad(second)}`}`;
}

/** Reads a date and a time, split at "T", " at ", a comma or the last spaces before the time. */
function readDateTime(text: string, locale: string): string | undefined {
  const t = text.trim().replace(/\s+/g, " ");
  const iso = t.match(/^(.+?)T(.+)$/);
  if (iso) {
    const date = readDate(iso[1]!, locale), time = readTime(iso[2]!);
    return date && time ? `${date}T${time}` : undefined;
  }
  const time = t.match(
    /^(.*?)(?:,| at | )\s*(\d{1,2}(?:[:.h]\d{2})?(?::\d{2})?(?: ?[ap]\.? ?m?\.?)?)$/i,
  );
  if (!time) return undefined;
  const date = readDate(time[1]!.replace(/[, ]+$/, ""), locale);
  const clock = readTime(time[2]!);
  return date && clock ? `${date}T${clock}` : undefined;
}

/** Reads a month: `YYYY-MM`, `MM/YYYY`, or a month name and a year. */
function readMonth(text: string, locale: string): string | undefined {
  const t = text.trim().replace(/\s+/g, " ");
  let m = t.match(/^(\d{4})[-/.](\d{1,2})$/);
  if (m) {
    return Number(m[2]) >= 1 && Number(m[2]) <= 12 ? `${m[1]}-${pad(Number(m[2]))}` : undefined;
  }
  m = t.match(/^(\d{1,2})[-/.](\d{4})$/);
  if (m) {
    return Number(m[1]) >= 1 && Number(m[1]) <= 12 ? `${m[2]}-${pad(Number(m[1]))}` : undefined;
  }
  const date = readDate(`1 ${t}`, locale);
  return date?.slice(0, 7);
}

/** The number of ISO weeks in a year: 53 when it starts on a Thursday, or is a leap year starting on a Wednesday. */
function weeksIn(year: number): number {
  const day = new Date(Date.UTC(year, 0, 1)).getUTCDay();
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return day === 4 || (leap && day === 3) ? 53 : 52;
}

/** Reads a week: `YYYY-Www`, "Week 37, 2012", "W37 2012", "2012 week 37". */
function readWeek(text: string): string | undefined {
  const t = text.trim().toLowerCase().replace(/\s+/g, " ");
  const m = t.match(/^(\d{4})[- ,]*(?:w|week) ?(\d{1,2})$/) ??
    t.match(/^(?:w|week) ?(\d{1,2})[ ,/-]*(\d{4})$/);
  if (!m) return undefined;
  const [year, week] = t.match(/^\d{4}/)
    ? [Number(m[1]), Number(m[2])]
    : [Number(m[2]), Number(m[1])];
  if (week < 1 || week > weeksIn(year)) return undefined;
  return `${pad(year, 4)}-W${pad(week)}`;
}

/**
 * The value a date-like input takes for what a person typed.
 *
 * @param type the input's type: date, time, datetime-local, month or week
 * @param text what the agent typed
 * @param locale the page's locale (its `lang`, else the browser's), for the order of numeric dates
 * @returns the input's value, or `undefined` when the text cannot be read as one
 */
export function toInputValue(type: string, text: string, locale: string): string | undefined {
  switch (type) {
    case "date":
      return readDate(text, locale);
    case "time":
      return readTime(text);
    case "datetime-local":
      return readDateTime(text, locale);
    case "month":
      return readMonth(text, locale);
    case "week":
      return readWeek(text);
    default:
      return undefined;
  }
}

/** Examples of what each type reads, for error messages. */
export const EXAMPLES: Readonly<Record<string, string>> = {
  date: '"09/10/2012" or "Sep 10, 2012"',
  time: '"8:22 AM" or "20:22"',
  "datetime-local": '"09/10/2012 8:22 AM"',
  month: '"September 2012" or "09/2012"',
  week: '"Week 37, 2012"',
};
