/*
 * tiocsti TEXT [LOG]: push TEXT into the input of this process's terminals, as any
 * process left in someone's terminal session can (TIOCSTI; t6002): its controlling
 * terminal (/dev/tty), then each of fds 0-2 that is a terminal. Appends what each try
 * gave to LOG (default: standard output) on one line ("tty:ENXIO 0:no-tty 1:ok 2:ok")
 * and exits 0 when a push worked, else 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* "ok", or the errno's name for the usual refusals */
static const char *push(int fd, const char *text)
{
	for (; *text; text++)
		if (ioctl(fd, TIOCSTI, text) < 0)
			return errno == EPERM ? "EPERM" : errno == EIO ? "EIO" : strerror(errno);
	return "ok";
}

int main(int argc, char **argv)
{
	int tty, worked = 0;
	const char *r;
	FILE *log = stdout;

	if (argc != 2 && argc != 3)
		return 64;
	if (argc == 3 && !(log = fopen(argv[2], "a"))) {
		perror(argv[2]);
		return 2;
	}
	tty = open("/dev/tty", O_RDWR | O_NOCTTY);
	r = tty < 0 ? (errno == ENXIO ? "ENXIO" : strerror(errno)) : push(tty, argv[1]);
	worked |= !strcmp(r, "ok");
	fprintf(log, "tty:%s", r);
	for (int fd = 0; fd <= 2; fd++) {
		r = isatty(fd) ? push(fd, argv[1]) : "no-tty";
		worked |= !strcmp(r, "ok");
		fprintf(log, " %d:%s", fd, r);
	}
	fprintf(log, "\n");
	fclose(log);
	return worked ? 0 : 1;
}
