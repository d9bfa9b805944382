// Copies the browser builds of the dashboard's npm libraries from node_modules/
// to vendor/, the only library files the daemon serves. Run by `npm ci`
// (postinstall); vendor/ is rebuilt from scratch each time.
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// [package, file in the package, name under vendor/<package>/]
const FILES = [
  ['uplot', 'dist/uPlot.esm.js', 'uPlot.esm.js'],
  ['uplot', 'dist/uPlot.min.css', 'uPlot.min.css'],
  ['uplot', 'LICENSE', 'LICENSE'],
];

const vendor = path.join(root, 'vendor');
fs.rmSync(vendor, {recursive: true, force: true});
for (const [pkg, file, name] of FILES) {
  const from = path.join(root, 'node_modules', pkg, file);
  const to = path.join(vendor, pkg, name);
  fs.mkdirSync(path.dirname(to), {recursive: true});
  fs.copyFileSync(from, to);
}
const version = JSON.parse(fs.readFileSync(path.join(root, 'node_modules/uplot/package.json'), 'utf8')).version;
fs.writeFileSync(path.join(vendor, 'VERSIONS'), `uplot ${version}\n`);
console.log(`dashboards/vendor: ${FILES.length} files (uplot ${version})`);
