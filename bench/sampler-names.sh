#!/usr/bin/env bash
# bench/sampler-names.sh LIB < sampler-output -- names the "libcgshim.so+0x..."
# lines of bench/sampler.c's report with addr2line (function, file:line).
lib=$1
while IFS= read -r l; do
  if [[ $l =~ (libcgshim\.so\+0x[0-9a-f]+) ]]; then
    off=${BASH_REMATCH[1]#libcgshim.so+}
    fn=$(addr2line -f -i -e "$lib" "$off" | head -1)
    echo "${l/${BASH_REMATCH[1]}/$fn}"
  else
    echo "$l"
  fi
done
