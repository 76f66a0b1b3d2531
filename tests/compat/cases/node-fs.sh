# node-fs: the fs module (libuv; io_uring refused, so its thread pool)
case_ 'cd "$1" || exit 90
cat > fs.js <<"EOF"
const fs = require("fs"), path = require("path");
const d = path.join(process.argv[2], "n");
const rel = (p) => path.relative(process.argv[2], p);
fs.mkdirSync(path.join(d, "a/b/c"), { recursive: true });
fs.writeFileSync(path.join(d, "a/one.txt"), "hello\n");
fs.appendFileSync(path.join(d, "a/one.txt"), "world\n");
console.log(JSON.stringify(fs.readFileSync(path.join(d, "a/one.txt"), "utf8")));
fs.symlinkSync("one.txt", path.join(d, "a/link"));
fs.symlinkSync("b/c", path.join(d, "a/dirlink"));
fs.linkSync(path.join(d, "a/one.txt"), path.join(d, "a/hard"));
const kind = (e) => e.isDirectory() ? "/" : e.isSymbolicLink() ? "@" : e.isFile() ? "" : "?";
console.log(fs.readdirSync(path.join(d, "a"), { withFileTypes: true }).map((e) => e.name + kind(e)).sort().join(" "));
console.log(fs.readlinkSync(path.join(d, "a/link")), rel(fs.realpathSync(path.join(d, "a/dirlink"))));
const st = fs.statSync(path.join(d, "a/link")), lst = fs.lstatSync(path.join(d, "a/link"));
console.log(st.isFile(), st.size, st.nlink, lst.isSymbolicLink(), (st.mode & 0o777).toString(8));
fs.renameSync(path.join(d, "a/one.txt"), path.join(d, "a/b/two.txt"));
console.log(fs.existsSync(path.join(d, "a/one.txt")), fs.existsSync(path.join(d, "a/link")), fs.readFileSync(path.join(d, "a/hard"), "utf8").length);
fs.chmodSync(path.join(d, "a/b/two.txt"), 0o600);
fs.utimesSync(path.join(d, "a/b/two.txt"), 1000000000, 1234567890);
const s2 = fs.statSync(path.join(d, "a/b/two.txt"));
console.log((s2.mode & 0o777).toString(8), s2.mtimeMs, s2.atimeMs);
fs.truncateSync(path.join(d, "a/b/two.txt"), 3);
fs.copyFileSync(path.join(d, "a/b/two.txt"), path.join(d, "copy"));
fs.cpSync(path.join(d, "a"), path.join(d, "a2"), { recursive: true });
console.log(fs.readFileSync(path.join(d, "copy"), "utf8"), fs.readdirSync(path.join(d, "a2")).sort().join(" "));
try { fs.mkdirSync(path.join(d, "a")); } catch (e) { console.log(e.code); }
try { fs.readFileSync(path.join(d, "nope")); } catch (e) { console.log(e.code); }
try { fs.rmdirSync(path.join(d, "a")); } catch (e) { console.log(e.code); }
const t = fs.mkdtempSync(path.join(d, "tmp-"));
console.log(path.basename(t).length, fs.readdirSync(t).length);
(async () => {
  const fp = fs.promises;
  await fp.writeFile(path.join(d, "p.txt"), "x".repeat(100000));
  const h = await fp.open(path.join(d, "p.txt"), "r");
  const { bytesRead } = await h.read(Buffer.alloc(10), 0, 10, 99995);
  await h.close();
  console.log("promises", bytesRead, (await fp.stat(path.join(d, "p.txt"))).size, (await fp.readdir(d)).length);
  const w = fs.watch(d);
  const seen = new Promise((res) => w.on("change", (ev, name) => { if (name === "watched") res(ev); }));
  setTimeout(() => fs.writeFileSync(path.join(d, "watched"), "w"), 50);
  let timer;
  const ev = await Promise.race([seen, new Promise((res) => { timer = setTimeout(() => res("timeout"), 5000); })]);
  clearTimeout(timer);
  w.close();
  console.log("watch", ev);
  fs.rmSync(d, { recursive: true, force: true });
  console.log("removed", fs.existsSync(d));
})();
EOF
node fs.js "$1"'
