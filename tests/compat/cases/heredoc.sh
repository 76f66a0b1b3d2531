# heredoc: here-documents in /tmp (bash writes big ones to a file in $TMPDIR)
case_ 'cd "$1" || exit 90
cat > hd.sh <<"EOF"
x=expanded
cat <<END
small $x
END
cat <<"END" | wc -c
literal $x
END
big=$(seq 30000)
cat <<END | md5sum
$big
END
while read -r l; do echo "<$l>"; done <<END
one
two
END
EOF
sh hd.sh; bash hd.sh
bash -c "read -r a b <<< \"here string\"; echo \$b"
TMPDIR="$1" bash hd.sh | md5sum
sh -c "cat <<E > \"$1/out\"
written \$((6 * 7))
E
cat \"$1/out\""'
