/* A lab on this host: its plan, image, libvirt objects and guests, from
 * creation through boot to teardown. Every phase's duration is recorded. */
#pragma once

#include <json-c/json.h>
#include <libvirt/libvirt.h>

#include "virt/host.h"
#include "virt/virt.h"
#include "cache/image.h"
#include "topology/plan.h"
#include "topology/topology.h"

/* One libvirt host of the lab: the one host of a one-host lab, or one of a lab's hosts. */
struct ml_lab_host {
    virConnectPtr conn; /* its own reference */
    char *uri;          /* the URI conn was opened with, whole (key files and all): what its
                         * SSH is (hostshell.h) */
    bool remote;        /* another host's libvirt: the lab's files travel to it as volumes */
    bool pool_defined;  /* the lab's pool there exists already (the remote KVM probe made it) */
    char *base, *kernel, *initrd; /* the image's files as the host sees them: the cache's here,
                                   * the image pool's there */
    unsigned mtu;                 /* the lab's MTU on it; 0: the default (a one-host lab) */
    unsigned underlay_mtu;        /* the MTU of its route to the other hosts (0: one host) */
    char underlay_dev[32];        /* the device that route leaves by */
};

struct ml_lab {
    virConnectPtr conn; /* the hub's host's (a reference of its own): what measures the hub */
    const struct ml_topology *topo;
    struct ml_plan *plan;
    struct ml_image image;
    struct ml_host_accel accel;
    GPtrArray *artifacts[ML_MAX_NODES]; /* host files each guest's artifacts CD carries (the
                                         * dataplanes' choice, handed down by the session) */
    char run_id[40];                    /* this invocation's run id (the plan's, unless attached) */
    char *run_dir;                      /* results, logs and the guests' consoles end up here */
    virDomainPtr dom[ML_MAX_NODES];
    double boot_s[ML_MAX_NODES];  /* start to guest agent answering */
    double ready_s[ML_MAX_NODES]; /* start to cloud-init finished */
    double cpu_s[ML_MAX_NODES];   /* the guest's CPU time (its QEMU) when it was ready */
    double save_s[ML_MAX_NODES];  /* a cold guest saved for the next warm start: seconds */
    bool warm[ML_MAX_NODES];      /* restored from a saved guest (see warm.h), not booted */
    char *warm_key[ML_MAX_NODES]; /* the key its saved guest has or gets; NULL: none */
    char *xml[ML_MAX_NODES];      /* each domain's XML, as defined (and restored) */
    char *firewall;               /* the guest firewall (nft), handed down by the session:
                                   * an image that holds before cloud-init loads it there,
                                   * before its network is up (firewall_early) */
    bool firewall_early;
    char *user_data_first[ML_MAX_NODES]; /* NULL, or a #cloud-config that goes before the lab's
                                          * own in the guest's user-data (export --verify: the
                                          * exported hub's, ml_seed_multipart) */
    struct json_object *dataplanes;      /* each dataplane's per-run state, {name: {...}}: what
                                          * it set up and learnt, saved in the state file; only
                                          * the dataplanes read inside */
    struct json_object *phases;    /* [{name, seconds}], contiguous: they add up to wall time */
    double phase_mark;             /* ml_elapsed() when the current phase began */
    struct json_object *up_phases; /* on attach: the phases of the `up` that built the lab */
    int run_fd;                    /* the run directory, opened once (see rundir.h) */
    bool run_open;
    int lock_fd; /* the lab's lock (see lock.h), held until ml_lab_clear */
    bool locked;
    bool created;    /* this process created the lab's objects */
    bool complete;   /* every phase of up finished */
    char *up_run_id; /* on attach: the run id of the `up` that built the lab */
    bool capture;    /* run --capture: pcaps of every check and NAT matrix cell */
    enum ml_nat_type nat_now[ML_MAX_NODES]; /* the NAT each node sits behind now: the topology's
                                             * until the NAT matrix switches it (and back) */
    struct ml_wan_profile wan_now[ML_MAX_NODES]; /* each node's WAN profile in force now (set by
                                                  * measure/wancheck.h; a sweep changes it) */
    /* export --verify: the public IPv4 address mapped onto each node's lab address (a DNAT in
     * the other guests' output path), so that a dataplane there sees its peer at that address;
     * 0.0.0.0 for none. A check accepts a peer's endpoint at either. */
    struct in_addr mapped_from[ML_MAX_NODES];
    bool remote;    /* conn is another host's libvirt (ml_virt_conn_remote): the lab's files
                     * travel to it as volumes (volume.h), its verdicts are its own */
    char *uri;      /* conn's URI, whole (key files and all): what its SSH is (hostshell.h) */
    size_t n_hosts; /* the plan's: 1 unless the topology spreads the lab over hosts */
    struct ml_lab_host hosts[ML_HOSTS_MAX];
    unsigned long long base_size; /* the base's virtual size, bytes */
    const char *write_prefix;     /* NULL, or a folder of the run directory that ml_lab_write puts
                                   * every file under ("sweep/step-2/": a later sweep step's raw
                                   * files apart from the first's) */
};

/* "ip netns exec mlnat " when node's daemons run behind a NAT now, else "": what a command
 * that must run beside them (ping, iperf3, a dataplane's tool) is prefixed with. */
const char *ml_lab_netns_prefix(const struct ml_lab *lab, size_t node);

/* How the lab's guests started: "cold" (all booted), "warm" (all restored from their saved
 * state, see warm.h) or "mixed". */
const char *ml_lab_start(const struct ml_lab *lab);

/* MESHLAB_BOOT_TIMEOUT (seconds) or the default; an unusable value is an input error. */
bool ml_lab_boot_timeout(double *ret, GError **err);

/* Where a booting guest is: its agent silent, held before cloud-init (an image that takes its
 * seed through the agent), configuring itself, or ready. */
enum ml_boot_stage { ML_BOOT_AGENT, ML_BOOT_HOLD, ML_BOOT_CONFIG, ML_BOOT_READY };
/* Pure: the stage a guest reaches once what its stage waits for was seen (its agent answered,
 * cloud-init's hold released, cloud-init finished). From the agent an image that takes its seed
 * through the agent (seed_by_agent) goes to the hold, any other to cloud-init. */
enum ml_boot_stage ml_boot_next(enum ml_boot_stage stage, bool seed_by_agent);
/* Pure: whether the ready file an image that takes its seed through the agent writes
 * ("ok\n...run=ID\n...", or the failure) says that cloud-init configured node for this run;
 * false with err saying what it says otherwise. Strips text in place. */
bool ml_boot_ready_file(char *text, const char *run_id, const char *node, GError **err);
enum ml_boot_verdict { ML_BOOT_WAITING, ML_BOOT_ALL_READY, ML_BOOT_LATE };
/* Pure: what the stages of n guests (named names[i]) mean elapsed_s after their start: all
 * ready (even past the timeout), late once elapsed_s exceeds timeout_s (err names each guest not
 * ready and what it waits for), else still waiting. */
enum ml_boot_verdict ml_boot_judge(const enum ml_boot_stage *stage, const char *const *names,
                                   size_t n, double elapsed_s, double timeout_s, GError **err);

/* Opens the lab's hosts: the topology's hosts, or uri for a one-host lab (a topology that names
 * its hosts refuses a given --connect or MESHLAB_URI). Then, for each, whether it is another
 * host's, and the pool directory as that host has it (ml_virt_lab_pool_dir); lab->conn is the
 * hub's host's. A lab over several hosts needs each host's shell (hostshell.h): a host without
 * one is refused here, before anything is made. */
bool ml_lab_connect(struct ml_lab *lab, const char *uri, GError **err);
/* The host guest i runs on. */
struct ml_lab_host *ml_lab_host_of(const struct ml_lab *lab, size_t i);
/* The URI of guest i's host's shell for a host tool (tcpdump): NULL on this machine's libvirt,
 * else its host's URI. */
const char *ml_lab_shell_uri(const struct ml_lab *lab, size_t i);
/* On another host, the KVM verdict from that host (kvm_remote.h): the lab is recorded, its
 * pool made, and kernel (this machine's path) uploaded into the host's image pool first. A lab
 * over several hosts asks each (this machine's own libvirt by ml_host_probe_accel): KVM only
 * when every one has it. */
bool ml_lab_probe_remote(struct ml_lab *lab, const char *kernel, GError **err);
/* A lab over several hosts: each host's route to every other's underlay address (its device and
 * MTU into lab->hosts), and the lab's MTU from the smallest (VXLAN's 50 bytes less). Before
 * anything is made there: an underlay address that is not the host's is refused here. */
bool ml_lab_underlay_routes(struct ml_lab *lab, GError **err);
/* Everything up to running guests: image, networks, pools, the hosts' stitching, overlays,
 * seeds, domains, boot. On failure the caller tears down. */
bool ml_lab_create(struct ml_lab *lab, GError **err);
/* Finds a lab that `meshlab up` left running (state file and domains). */
bool ml_lab_attach(struct ml_lab *lab, GError **err);
/* Copies consoles and cloud-init logs of every guest into run_dir/guests/. */
void ml_lab_collect_logs(struct ml_lab *lab);
/* Copies every guest's journal of the last `seconds` into run_dir/guests/NODE-TAG-journal.log
 * (under write_prefix), for a step that failed mid-run: its daemons' own words, which no
 * console holds. Returns the files' pattern relative to the run directory ("guests/
 * *-TAG-journal.log") when at least one was written, else NULL. Never fails the run. */
char *ml_lab_save_journals(struct ml_lab *lab, const char *tag, unsigned seconds);
/* Removes lab's objects from one of its hosts (conn; named name in messages, its shell at uri):
 * its domains, networks, pools and volumes (ml_virt_teardown; another controller's too when
 * foreign), and, for a lab over several hosts (several), its VXLAN devices there. cb hears of
 * each. */
bool ml_lab_host_teardown(const char *lab, const char *name, virConnectPtr conn, const char *uri,
                          bool several, bool foreign, ml_teardown_cb cb, void *opaque,
                          GError **err);
/* Removes the lab's objects on every host and its state file; prints what went. */
bool ml_lab_destroy(struct ml_lab *lab, GError **err);
void ml_lab_clear(struct ml_lab *lab);

/* Ends the current phase under name and starts the next: phases are contiguous
 * from the start of the command, so they add up to its wall time. A name used
 * again adds to the earlier entry. */
void ml_lab_phase(struct ml_lab *lab, const char *name);
/* Where ml_lab_write puts rel, relative to the run directory: rel under write_prefix when set. */
char *ml_lab_rel(const struct ml_lab *lab, const char *rel);
/* Writes rel below the run directory (see rundir.h), under write_prefix when set; false, with a
 * warning when err is NULL, if it cannot. */
bool ml_lab_write(const struct ml_lab *lab, const char *rel, const char *data, gssize len,
                  GError **err);
/* Runs cmds[i], with inputs[i] (may be NULL) on its stdin, in every guest i
 * that `which` selects (NULL: all) at once, and collects each stdout into
 * out[i] (out may be NULL). Fails on the first command that exits non-zero,
 * naming the guest and `what`. */
bool ml_lab_run_parallel(struct ml_lab *lab, const bool *which, const char *const *cmds,
                         const char *const *inputs, double timeout, char **out, const char *what,
                         GError **err);

/* Pings target from the measuring client, once a second, until it answers or
 * `tries` pings went unanswered; `through` names the dataplane for the error. */
bool ml_lab_wait_ping(struct ml_lab *lab, struct in_addr target, unsigned tries,
                      const char *through, GError **err);

/* The guest running node index i of the topology. */
virDomainPtr ml_lab_dom(const struct ml_lab *lab, size_t i);

/* The lab's state file: written before anything is created, removed by down. */
bool ml_lab_state_write(const struct ml_lab *lab, GError **err);
struct json_object *ml_lab_state_read(const char *lab_name);
/* The libvirt URI of an existing lab's commands (down, status, exec, console): --connect or
 * MESHLAB_URI when given, else the one its state file records (*ret_recorded true), else the
 * default. */
char *ml_lab_uri(const char *lab_name, bool *ret_recorded);
/* The URI of the host node of lab runs on: for a lab over several hosts the one its state
 * records for node, else ml_lab_uri's. */
char *ml_lab_node_uri(const char *lab_name, const char *node);
/* The names of the labs this machine holds a state file of, sorted. */
GPtrArray *ml_lab_state_names(void);
bool ml_lab_state_exists(const char *lab_name);
/* Removes the lab's state file and its private secrets (the pre-auth key);
 * calls cb for each file removed. */
void ml_lab_state_remove(const char *lab_name, void (*cb)(const char *what, void *opaque),
                         void *opaque);
