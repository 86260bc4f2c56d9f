/* usermount-example IMAGE DIRECTORY: mount a filesystem image at DIRECTORY,
 * show what was mounted, and unmount it again. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <usermount.h>

int main(int argc, char *argv[]) {
        usermount_client *client = NULL;
        usermount_options *options = NULL;
        usermount_info *info = NULL;
        char target[PATH_MAX], *mount_point = NULL;
        const char *name, *message;
        int fd, r;

        if (argc != 3) {
                fprintf(stderr, "Usage: %s IMAGE DIRECTORY\n", argv[0]);
                return 2;
        }
        /* The image is opened with our own permissions: that is the proof of access. */
        fd = open(argv[1], O_RDWR | O_CLOEXEC);
        if (fd < 0 || !realpath(argv[2], target)) {
                perror("open");
                return 1;
        }

        r = usermount_client_new(&client);
        if (r >= 0)
                /* Ask polkit's questions on our terminal, as the usermount command does. */
                r = usermount_client_set_auth(client, USERMOUNT_AUTH_TTY_AGENT);
        if (r >= 0)
                r = usermount_options_new(&options);
        if (r >= 0)
                r = usermount_options_set_target(options, target);
        if (r >= 0)
                r = usermount_mount_fd(client, fd, options, &mount_point, &info);
        if (r >= 0) {
                printf("Mounted %s (%s, label '%s') at %s\n", argv[1],
                       usermount_info_get_fstype(info),
                       usermount_info_get_label(info) ? usermount_info_get_label(info) : "",
                       mount_point);
                r = usermount_unmount(client, mount_point, 0);
        }
        if (r >= 0)
                printf("Unmounted %s\n", mount_point);
        else if (client && usermount_client_get_error(client, &name, &message) >= 0)
                fprintf(stderr, "%s (%s)\n", message, name);
        else
                fprintf(stderr, "Failed: %s\n", strerror(-r));

        free(mount_point);
        usermount_info_free(info);
        usermount_options_free(options);
        usermount_client_unref(client);
        close(fd);
        return r < 0 ? 1 : 0;
}
