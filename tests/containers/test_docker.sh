# haven inside Docker containers of the private dockerd, as a CI job or a
# user's `docker run` makes them: Docker's default profile (its seccomp
# filter, no CAP_SYS_ADMIN: no namespaces for haven), with
# CAP_SYS_ADMIN added, and privileged; each as root and as the image's
# user (uid 1000).  The checks are probe.sh's (see lib.sh, dk_probe).

test_docker_default_root() {
  dk_probe "$CTR_PREFIX-default-root" docker_default root
}
test_docker_default_user() {
  dk_probe "$CTR_PREFIX-default-user" docker_default user
}
test_docker_sys_admin_root() {
  dk_probe "$CTR_PREFIX-sysadmin-root" docker_sys_admin root --cap-add SYS_ADMIN
}
test_docker_sys_admin_user() {
  dk_probe "$CTR_PREFIX-sysadmin-user" docker_sys_admin user --cap-add SYS_ADMIN
}
test_docker_privileged_root() {
  dk_probe "$CTR_PREFIX-privileged-root" docker_privileged root --privileged
}
test_docker_privileged_user() {
  dk_probe "$CTR_PREFIX-privileged-user" docker_privileged user --privileged
}

# A container whose hard limit on open files is below the policies'
# nofile (4096): the limit cannot be raised there (that needs
# CAP_SYS_RESOURCE), and the lower one already holds the rule (stricter),
# so the run must neither fail nor refuse without naming the rule.
test_docker_low_nofile_user() {
  dk_probe "$CTR_PREFIX-lownofile-user" docker_low_nofile user --ulimit nofile=1024:1024
}
