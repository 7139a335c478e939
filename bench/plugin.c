/* Benchmark workload: a minimal Nagios-style plugin in C. Prints a status
 * line with perfdata and long output, exits 0 (OK). */
#include <stdio.h>

int main(void) {
  printf("OK - 3 services running, load 0.42 | load1=0.42;5;10;0; load5=0.30;4;8;0; "
         "'disk used'=41%%;80;90;0;100 time=0.001s;;;0;\n"
         "service a: running\nservice b: running\nservice c: running\n");
  return 0;
}
