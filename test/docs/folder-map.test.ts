/**
 * The README's map of the folders matches the tree: every top-level folder and
 * every `service/` sub-folder is in the map, and every folder the map names exists.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Folders that are not part of the project: installed packages, tool output, hidden folders. */
const NOT_PROJECT = new Set(['node_modules', 'test-results', 'coverage']);

/** Folder paths (without the trailing slash) listed between the README's folder-map markers. */
function mappedFolders(readme: string): string[] {
  const start = readme.indexOf('<!-- folder-map -->');
  const end = readme.indexOf('<!-- /folder-map -->');
  if (start < 0 || end < start) throw new Error('README.md has no <!-- folder-map --> … <!-- /folder-map --> section');
  const folders: string[] = [];
  for (const line of readme.slice(start, end).split('\n')) {
    const m = /^\s*((?:\.?[a-z0-9][\w.-]*\/)+)(?:\s|$)/.exec(line);
    if (m) folders.push(m[1]!.replace(/\/$/, ''));
  }
  return folders;
}

function subFolders(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true })
    .filter((d) => d.isDirectory() && !d.name.startsWith('.') && !NOT_PROJECT.has(d.name))
    .map((d) => (dir === '.' ? d.name : `${dir}/${d.name}`));
}

const isDir = (rel: string) => existsSync(path.join(root, rel)) && statSync(path.join(root, rel)).isDirectory();

describe('README folder map', () => {
  const map = mappedFolders(readFileSync(path.join(root, 'README.md'), 'utf8'));

  it('names every top-level folder and every service/ sub-folder', () => {
    const real = [...subFolders('.'), ...subFolders('service')];
    const missing = real.filter((f) => !map.includes(f));
    expect(missing, 'folders missing from the map in README.md (add a line for each)').toEqual([]);
  });

  it('names only folders that exist', () => {
    const absent = map.filter((f) => !isDir(f));
    expect(absent, 'folders in the README map that do not exist (remove or rename them)').toEqual([]);
  });
});
