// scrapeLines(): a family's per-check sample lines written from a scrape's
// columns (scrape-lines.h), called by src/metrics/scrape/line-bytes.ts.
#ifndef NOSHELL_SCRAPE_LINES_ADDON_H_
#define NOSHELL_SCRAPE_LINES_ADDON_H_

#include <napi.h>

namespace noshell {

Napi::Value ScrapeLines(const Napi::CallbackInfo& info);

}  // namespace noshell

#endif  // NOSHELL_SCRAPE_LINES_ADDON_H_
