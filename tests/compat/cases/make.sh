# make: dependencies and rebuilds decided by timestamps
case_ 'cd "$1" && mkdir mk && cd mk || exit 90
printf "#define N 3\n" > util.h
printf "#include \"util.h\"\nint util(void) { return N; }\n" > util.c
printf "#include <stdio.h>\nint util(void);\nint main(void) { printf(\"util=%%d\\\\n\", util()); return 0; }\n" > main.c
printf "CC = cc\nmain: main.o util.o\n\t\$(CC) -o \$@ main.o util.o\n%%.o: %%.c\n\t\$(CC) -c -o \$@ \$<\nutil.o: util.h\nclean:\n\trm -f main *.o\n.PHONY: clean\n" > Makefile
m() { make --no-print-directory "$@"; }
m || exit 91; ./main
m; m -q; echo "q=$?"
touch util.c; m -q; echo "q=$?"; m; ./main
sed -i s/3/4/ util.h; m; ./main
touch -d "2001-01-01" main.c; m
touch -d "2001-01-01" main.o; m
touch -r main main.c; m
m -n clean; m clean; ls
m -j4 -s && ./main'
