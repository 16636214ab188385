<?php
// A reseller placing one order of every type through the usual client class
// (docs/examples/api-v2-client.php), then each malformed variant, printing
// what the class decoded for each, in order.
// Usage: php order-types.php URL KEY < cases.json
// cases.json: [{"service": 1, "link": "https://...", "fields": {...}}, ...]
require __DIR__ . '/../../../docs/examples/api-v2-client.php';

[, $url, $key] = $argv;
$api = new Api();
$api->api_url = $url;
$api->api_key = $key;
$cases = json_decode(stream_get_contents(STDIN), true);
$out = [];
foreach ($cases as $case) {
    $out[] = $api->order(array_merge(['service' => $case['service'], 'link' => $case['link']], $case['fields']));
}
echo json_encode($out), "\n";
