/* The one version string of stampede: `stampede --version`, the worker's hello and the
 * controller's welcome all say this. A build may override it with -DSTAMPEDE_VERSION=... */
#ifndef STAMPEDE_VERSION_H
#define STAMPEDE_VERSION_H

#ifndef STAMPEDE_VERSION
#define STAMPEDE_VERSION "0.1.0"
#endif

#endif
