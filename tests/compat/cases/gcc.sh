# gcc: a C file written in /tmp, compiled there, the binary run from there
case_ 'cd "$1" || exit 90
cat > hello.c <<"EOF"
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    unsigned long h = 5381; int primes = 0;
    for (int n = 2; n < 20000; n++) {
        int p = 1;
        for (int d = 2; d * d <= n; d++) if (n % d == 0) { p = 0; break; }
        if (p) { primes++; h = h * 33 + n; }
    }
    printf("argc=%d arg1=%s primes=%d hash=%lu\n", argc, argc > 1 ? argv[1] : "-", primes, h);
    return argc > 2 ? 7 : 0;
}
EOF
gcc -O2 -Wall -o hello hello.c || exit 91
./hello one
"$1/hello" two
"$1/hello" three four; echo "rc=$?"
gcc -c -o obj.o hello.c && gcc -o hello2 obj.o && ./hello2 linked'
