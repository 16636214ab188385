/**
 * Lists every line of the project that narrates how the work went instead of
 * saying what the product is and does: numbered stretches of work, issue
 * numbers, attempts and how things stood before. Documents and comments
 * describe the product as it stands; where a figure's origin matters they
 * cite the bench command or a commit hash, which stays true.
 *
 * It reads README.md and every text file under docs/, bench/, scripts/,
 * test/ and src/ (TypeScript, JavaScript, Markdown, PHP, Python, shell,
 * YAML), skipping generated files (docs/openapi.json, which the schemas in
 * src/ write). The patterns are in NARRATION below, each with its name; they
 * are narrow on purpose, so that product words stay allowed: a benchmark's
 * scenario session, an operator session, a PostgreSQL session, "the old
 * secret" during a rotation, "an earlier page" of a listing.
 *
 * `node dist/scripts/narration.js [ROOT]` prints `file:line: text` for each
 * line found and exits 1 if there is any (ROOT defaults to the working
 * directory); test/architecture/narration.test.ts runs it over a planted tree.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

/** What a narrating line looks like: each pattern with a short name for it. */
export const NARRATION: readonly { name: string; pattern: RegExp }[] = [
  { name: 'numbered-stretch', pattern: /\b(?:sessions?|stops?) #?\d/i },
  { name: 'issue-number', pattern: /\bissues? #?\d/i },
  { name: 'named-stretch', pattern: /\b(?:this|next|earlier|previous|last|later|first) sessions?\b/i },
  { name: 'attempt', pattern: /\b(?:was|were|been) tried\b|\btried (?:before|earlier|first)\b|\bthrow-?away (?:copy|experiment|build)\b|\bno-go\b/i },
  { name: 'how-it-stood', pattern: /\bpreviously\b|\bformerly\b|\bhistorically\b|\b(?:we|it|this|that|which|they|there) used to\b|\bused to be\b/i },
  { name: 'earlier-build', pattern: /\b(?:earlier|older) (?:builds?|code|figures|sessions?)\b|\bthe (?:old|previous|original|former) (?:code|rule|build|implementation|design|way)\b/i },
  { name: 'change-told', pattern: /\bnow\b[^.;]{0,60}\binstead of\b|\bno longer (?:applies|apply|the case|true)\b|\bwhat changed since\b|\b(?:before|after|since) (?:the|this) (?:change|fix)\b|\bwas (?:fixed|rewritten|reworked)\b/i },
  { name: 'rework', pattern: /\brefactor(?:ed|ing|s)?\b/i },
  { name: 'team-story', pattern: /\bwe (?:tried|found|measured|changed|decided|removed|added|fixed|built)\b/i },
];

/** The folders read besides README.md. */
export const NARRATION_FOLDERS: readonly string[] = ['docs', 'bench', 'scripts', 'test', 'src'];

const TEXT_FILE = /\.(?:ts|js|mjs|cjs|md|php|py|sh|ya?ml)$/;
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git']);
const GENERATED = new Set(['docs/openapi.json']);

export interface NarratingLine {
  file: string;
  line: number;
  text: string;
  why: string;
}

/** The name of the first pattern the line matches, or null when it says what is. */
export function narrates(line: string): string | null {
  for (const { name, pattern } of NARRATION) if (pattern.test(line)) return name;
  return null;
}

/** The narrating lines of one file's text; `file` is only carried into the result. */
export function narrationIn(file: string, text: string): NarratingLine[] {
  const found: NarratingLine[] = [];
  text.split('\n').forEach((line, i) => {
    const why = narrates(line);
    if (why !== null) found.push({ file, line: i + 1, text: line.trim(), why });
  });
  return found;
}

function textFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    if (SKIPPED_DIRS.has(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return textFiles(path);
    return TEXT_FILE.test(name) ? [path] : [];
  });
}

/** Every narrating line under `root`, with paths relative to it ('/'-separated). */
export function findNarration(root: string): NarratingLine[] {
  const files = [join(root, 'README.md'), ...NARRATION_FOLDERS.flatMap((folder) => textFiles(join(root, folder)))];
  const found: NarratingLine[] = [];
  for (const path of files) {
    const file = relative(root, path).split(sep).join('/');
    if (GENERATED.has(file)) continue;
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue; // A tree without a README is read without it.
    }
    found.push(...narrationIn(file, text));
  }
  return found;
}

function main(): void {
  const root = process.argv[2] ?? process.cwd();
  const found = findNarration(root);
  for (const f of found) console.log(`${f.file}:${f.line}: ${f.text}`);
  if (found.length > 0) {
    console.error(`${found.length} line(s) narrate the work; say what the product is and does now, and cite a bench command or a commit where a figure's origin matters.`);
    process.exit(1);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();
