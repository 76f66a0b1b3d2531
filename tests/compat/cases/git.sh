# git: git in /tmp: init, add, commit, then branches, merge, stash, clone, gc
case_ 'cd "$1" && mkdir repo && cd repo || exit 90
g() { git -c user.name=Moat -c user.email=moat@example.invalid -c init.defaultBranch=main "$@"; }
g init -q || exit 91
echo hello > a.txt && mkdir sub && echo world > sub/b.txt
g add a.txt sub && g commit -qm "first" || exit 92
echo more >> a.txt && g commit -qam "second" || exit 93
g rm -q sub/b.txt && g commit -qm "third" || exit 94
g log --oneline | wc -l
g rev-list --count HEAD
g ls-files
g status --porcelain | wc -l
g show HEAD~1:a.txt
g cat-file -p HEAD^{tree}
# branches, merge, tag, stash, mv, a local clone (hard links to the objects),
# gc (packs), fsck; fixed dates make the commit ids stable
cd "$1" && mkdir r && cd r || exit 95
export GIT_AUTHOR_DATE="2024-01-01T00:00:00Z" GIT_COMMITTER_DATE="2024-01-01T00:00:00Z"
g init -q || exit 96
for i in 1 2 3; do echo "line $i" > f$i.txt; done; mkdir -p d/e && echo deep > d/e/x
g add . && g commit -qm base || exit 97
g branch feature && g switch -q feature || exit 98
echo feature >> f1.txt && g mv f2.txt d/f2.txt && g commit -qam "feature work" || exit 99
g switch -q main && echo main >> f3.txt && g commit -qam "main work" || exit 100
g merge -q --no-edit feature || exit 101
g tag -a v1 -m "version 1"
echo wip >> f3.txt && echo new > untracked.txt
g status --porcelain
g stash -q && g status --porcelain && g stash pop -q && g status --porcelain
g checkout -q -- f3.txt
g branch --list | tr -d " *"
g log --oneline --graph main
g log --oneline | wc -l
g describe
g diff --stat HEAD~2 HEAD | tail -1
cd .. && git clone -q r c && cd c || exit 102
g log --oneline -1; ls -R | head -20
g status --porcelain | wc -l
cd ../r && g gc -q && g count-objects -v | grep -E "^(count|in-pack|packs)"
g fsck --no-progress 2>&1 | wc -l
g rev-parse HEAD^{tree}'
