# shebang: shebang scripts written in /tmp, run by path
case_ 'cd "$1" || exit 90
printf "#!/bin/sh\necho \"sh: \$# [\$1] [\$2] \$(basename \"\$0\")\"\n" > s.sh
printf "#!/usr/bin/env python3\nimport os, sys\nprint(\"py:\", sys.executable, os.path.basename(sys.argv[0]), sys.argv[1:])\nprint(open(sys.argv[0]).readline().strip())\n" > p.py
chmod +x s.sh p.py
"$1/s.sh" a "b c"
./s.sh
"$1/p.py" x y
./p.py'
