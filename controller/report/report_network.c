#include "report_network.h"

json_t *report_network_json(const config_target_t *target) {
    char proxy[1024];
    const config_tls_t *tls = &target->tls;
    return json_pack("{s:s, s:{s:b, s:s?, s:s?}}", "proxy",
                     config_proxy_label(target, proxy, sizeof proxy), "tls", "insecure",
                     tls->insecure, "ca_file", tls->ca_file, "client_cert", tls->client_cert);
}

void report_network_print(FILE *out, const config_target_t *target) {
    char proxy[1024];
    if (target->proxy != CONFIG_PROXY_NONE)
        fprintf(out, "proxy: %s (target.proxy): the latencies include the proxy's\n",
                config_proxy_label(target, proxy, sizeof proxy));
    if (target->tls.insecure)
        fprintf(out, "WARNING: TLS verification was off (target.tls.insecure): the server's "
                     "certificate and name were not checked\n");
}
