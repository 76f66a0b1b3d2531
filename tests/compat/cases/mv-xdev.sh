# mv-xdev: mv between /tmp and /workspace
# Under moat these are two mounts: rename(2) gives EXDEV and mv copies and
# deletes; natively (one directory) it is a rename.  The result is the same.
case_ 'cd "$1" || exit 90
mkdir -p t/d/e && echo one > t/f && ln t/f t/h && ln -s f t/s && echo two > t/d/e/g && chmod 640 t/d/e/g
find t -exec touch -h -d "2018-08-08 08:08:08" {} +
mkdir -p "$OLDPWD/w" 2>/dev/null; cd "$OLDPWD" || exit 91
ws=$(pwd)/w.$$
mv "$1/t" "$ws" 2>&1 || exit 92
[ -e "$1/t" ] && echo "source left"
(cd "$ws" && find . -printf "%y %n %m %TY-%Tm-%Td %p %l\n" | sort)
mv "$ws/f" "$1/f.back" 2>&1 && cat "$1/f.back" "$ws/h"
mv "$ws" "$1/t" 2>&1 && ls "$1/t" && [ ! -e "$ws" ] && echo back
python3 -c "import shutil, sys; shutil.move(sys.argv[1] + \"/t/d\", \"d\"); print(sorted(__import__(\"os\").listdir(\"d\")))" "$1"
rm -rf d w'
