"""A page's text: decoding (:mod:`.decoding`, :mod:`.charset`), the HTML walkers
(:mod:`.lexbor_walker` for whole pages, :mod:`.lxml_walker` for regions, include and ignore, and
pages nested too deeply), the visible text as lines (:mod:`.visible`), the volatile patterns
(:mod:`.volatile`, :mod:`.volatile_languages`), the times that track the fetch time
(:mod:`.clock_times`), a watch's include and ignore (:mod:`.options`),
and the entry points that pick among them (:mod:`.normalise`). :mod:`.linewise` and
:mod:`.textbound` tell a stable text from the lines that changed, and a long page without
reading it whole.
"""
