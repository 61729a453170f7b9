/*
 * Copyright 2026-present the original author or authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package dev.idempotency.core;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link StoredResponseCodec}.
 *
 * @author Idempotency contributors
 */
class StoredResponseCodecTests {

	private final StoredResponseCodec codec = new StoredResponseCodec();

	@Test
	void formatVersion1IsStable() {
		StoredResponse response = new StoredResponse(201,
				List.of(new HttpHeader("Content-Type", "application/json"), new HttpHeader("Location", "/p/1")),
				"{\"id\":1}".getBytes(StandardCharsets.UTF_8));
		// version 1, flags 1 (body retained), status 0x00C9, 2 headers,
		// each length-prefixed, then the body length and the body
		String golden = "0101" + "00c9" + "02" + "0c" + hex("Content-Type") + "10" + hex("application/json") + "08"
				+ hex("Location") + "04" + hex("/p/1") + "08" + hex("{\"id\":1}");
		assertThat(HexFormat.of().formatHex(this.codec.encode(response))).isEqualTo(golden);
		assertThat(this.codec.decode(HexFormat.of().parseHex(golden))).isEqualTo(response);
	}

	@Test
	void responseWithoutBodyIsStable() {
		StoredResponse response = StoredResponse.withoutBody(200, List.of());
		assertThat(HexFormat.of().formatHex(this.codec.encode(response))).isEqualTo("0100" + "00c8" + "00" + "00");
		StoredResponse decoded = this.codec.decode(this.codec.encode(response));
		assertThat(decoded.isBodyRetained()).isFalse();
		assertThat(decoded).isEqualTo(response);
	}

	@Test
	void randomResponsesRoundTrip() {
		Random random = new Random(20261122);
		for (int i = 0; i < 2000; i++) {
			StoredResponse response = randomResponse(random);
			byte[] encoded = this.codec.encode(response);
			StoredResponse decoded = this.codec.decode(encoded);
			assertThat(decoded).isEqualTo(response);
			assertThat(decoded.headers()).containsExactlyElementsOf(response.headers());
		}
	}

	@Test
	void decodesARangeOfALargerArray() {
		StoredResponse response = new StoredResponse(200, List.of(new HttpHeader("A", "b")), new byte[] { 1, 2, 3 });
		byte[] encoded = this.codec.encode(response);
		byte[] padded = new byte[encoded.length + 20];
		System.arraycopy(encoded, 0, padded, 7, encoded.length);
		assertThat(this.codec.decode(padded, 7, encoded.length)).isEqualTo(response);
	}

	@Test
	void everyTruncationFailsCleanly() {
		StoredResponse response = randomResponse(new Random(7));
		byte[] encoded = this.codec.encode(response);
		for (int length = 0; length < encoded.length; length++) {
			int cut = length;
			assertThatExceptionOfType(StoredResponseFormatException.class)
				.isThrownBy(() -> this.codec.decode(encoded, 0, cut));
		}
	}

	@Test
	void trailingBytesAreRejected() {
		byte[] encoded = this.codec.encode(new StoredResponse(200, List.of(), new byte[] { 1 }));
		byte[] longer = new byte[encoded.length + 1];
		System.arraycopy(encoded, 0, longer, 0, encoded.length);
		assertThatExceptionOfType(StoredResponseFormatException.class).isThrownBy(() -> this.codec.decode(longer))
			.withMessageContaining("unexpected bytes");
	}

	@Test
	void unknownVersionAndFlagsAreRejected() {
		byte[] encoded = this.codec.encode(new StoredResponse(200, List.of(), new byte[0]));
		encoded[0] = 2;
		assertThatExceptionOfType(StoredResponseFormatException.class).isThrownBy(() -> this.codec.decode(encoded))
			.withMessageContaining("version 2");
		encoded[0] = 1;
		encoded[1] = 4;
		assertThatExceptionOfType(StoredResponseFormatException.class).isThrownBy(() -> this.codec.decode(encoded))
			.withMessageContaining("flags");
	}

	@Test
	void hugeAnnouncedLengthsNeverAllocate() {
		// body length announced as 2^31-1 with 3 bytes behind it
		byte[] hostile = HexFormat.of().parseHex("0101" + "00c8" + "00" + "ffffffff07" + "010203");
		assertThatExceptionOfType(StoredResponseFormatException.class).isThrownBy(() -> this.codec.decode(hostile))
			.withMessageContaining("exceeds the limit");
		// exactly the limit, 64 MiB, with 3 bytes behind it
		byte[] atLimit = HexFormat.of().parseHex("0101" + "00c8" + "00" + "80808020" + "010203");
		assertThatExceptionOfType(StoredResponseFormatException.class).isThrownBy(() -> this.codec.decode(atLimit))
			.withMessageContaining("Truncated");
	}

	@Test
	void overlongVarintIsRejected() {
		byte[] hostile = HexFormat.of().parseHex("0101" + "00c8" + "ffffffffff01");
		assertThatExceptionOfType(StoredResponseFormatException.class).isThrownBy(() -> this.codec.decode(hostile))
			.withMessageContaining("31 bits");
	}

	@Test
	void headerLimitsAreEnforcedWhenDecoding() {
		// 1025 headers announced
		byte[] tooMany = HexFormat.of().parseHex("0101" + "00c8" + "8108");
		assertThatExceptionOfType(StoredResponseFormatException.class).isThrownBy(() -> this.codec.decode(tooMany))
			.withMessageContaining("Header count 1025");
		// one header whose name and value are one byte over 256 KiB
		byte[] tooLarge = HexFormat.of().parseHex("0101" + "00c8" + "01" + "808010" + "00".repeat(256 * 1024) + "01");
		assertThatExceptionOfType(StoredResponseFormatException.class).isThrownBy(() -> this.codec.decode(tooLarge))
			.withMessageContaining("Headers exceed");
	}

	@Test
	void encodingRefusesWhatDecodingWouldRefuse() {
		StoredResponse tooManyHeaders = new StoredResponse(200, headers(StoredResponseCodec.MAX_HEADER_COUNT + 1, 1),
				new byte[0]);
		assertThatIllegalArgumentException().isThrownBy(() -> this.codec.encode(tooManyHeaders))
			.withMessageContaining("Header count 1025");
		// multi-byte characters count as their UTF-8 bytes
		StoredResponse largeHeaders = new StoredResponse(200,
				List.of(new HttpHeader("X-Large", "\u00e9".repeat(StoredResponseCodec.MAX_HEADER_BYTES / 2))),
				new byte[0]);
		assertThatIllegalArgumentException().isThrownBy(() -> this.codec.encode(largeHeaders))
			.withMessageContaining("Headers exceed");
		StoredResponse largeBody = new StoredResponse(200, List.of(), new byte[StoredResponseCodec.MAX_BODY_SIZE + 1]);
		assertThatIllegalArgumentException().isThrownBy(() -> this.codec.encode(largeBody))
			.withMessageContaining("Body length");
		assertThatIllegalArgumentException().isThrownBy(() -> this.codec.encode(StoredResponse.unreadable()));
	}

	@Test
	void responsesAtTheLimitsRoundTrip() {
		List<HttpHeader> headers = headers(StoredResponseCodec.MAX_HEADER_COUNT, 1);
		// the header bytes add up to exactly the limit
		int used = headers.stream().mapToInt((header) -> header.name().length() + header.value().length()).sum();
		HttpHeader last = headers.remove(headers.size() - 1);
		headers
			.add(new HttpHeader(last.name(), last.value() + "v".repeat(StoredResponseCodec.MAX_HEADER_BYTES - used)));
		StoredResponse response = new StoredResponse(200, headers, new byte[StoredResponseCodec.MAX_BODY_SIZE]);
		assertThat(StoredResponseCodec.fitToLimits(response)).isSameAs(response);
		assertThat(this.codec.decode(this.codec.encode(response))).isEqualTo(response);
	}

	@Test
	void fitToLimitsKeepsTheStatusAndTheLeadingHeadersThatFit() {
		List<HttpHeader> headers = headers(StoredResponseCodec.MAX_HEADER_COUNT + 100, 1);
		StoredResponse tooMany = new StoredResponse(201, headers, new byte[] { 1, 2 });
		StoredResponse fitted = StoredResponseCodec.fitToLimits(tooMany);
		assertThat(fitted.isBodyRetained()).isFalse();
		assertThat(fitted.status()).isEqualTo(201);
		assertThat(fitted.headers()).isEqualTo(headers.subList(0, StoredResponseCodec.MAX_HEADER_COUNT));
		assertThat(this.codec.decode(this.codec.encode(fitted))).isEqualTo(fitted);
		// a header that would cross the byte limit ends the headers kept
		List<HttpHeader> large = List.of(new HttpHeader("A", "a"),
				new HttpHeader("B", "b".repeat(StoredResponseCodec.MAX_HEADER_BYTES)), new HttpHeader("C", "c"));
		StoredResponse fittedLarge = StoredResponseCodec.fitToLimits(new StoredResponse(200, large, new byte[0]));
		assertThat(fittedLarge.headers()).containsExactly(new HttpHeader("A", "a"));
		// a body over the limit keeps every header
		StoredResponse largeBody = new StoredResponse(200, large.subList(0, 1),
				new byte[StoredResponseCodec.MAX_BODY_SIZE + 1]);
		assertThat(StoredResponseCodec.fitToLimits(largeBody))
			.isEqualTo(StoredResponse.withoutBody(200, large.subList(0, 1)));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> StoredResponseCodec.fitToLimits(StoredResponse.unreadable()));
	}

	private static List<HttpHeader> headers(int count, int valueLength) {
		List<HttpHeader> headers = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			headers.add(new HttpHeader("X-" + i, "v".repeat(valueLength)));
		}
		return headers;
	}

	@Test
	void randomGarbageNeverEscapesAsAnotherException() {
		Random random = new Random(42);
		for (int i = 0; i < 20_000; i++) {
			byte[] garbage = new byte[random.nextInt(64)];
			random.nextBytes(garbage);
			if (garbage.length > 0 && random.nextBoolean()) {
				garbage[0] = 1;
			}
			try {
				this.codec.decode(garbage);
			}
			catch (StoredResponseFormatException ex) {
				// expected for almost every input
			}
		}
	}

	private static StoredResponse randomResponse(Random random) {
		List<HttpHeader> headers = new ArrayList<>();
		int count = random.nextInt(6);
		for (int i = 0; i < count; i++) {
			headers.add(new HttpHeader("X-H" + random.nextInt(1000), randomText(random, random.nextInt(300))));
		}
		if (random.nextInt(10) == 0) {
			return StoredResponse.withoutBody(100 + random.nextInt(900), headers);
		}
		byte[] body = new byte[(random.nextInt(4) == 0) ? random.nextInt(70_000) : random.nextInt(200)];
		random.nextBytes(body);
		return new StoredResponse(100 + random.nextInt(900), headers, body);
	}

	private static String randomText(Random random, int length) {
		StringBuilder text = new StringBuilder(length);
		for (int i = 0; i < length; i++) {
			text.append((char) ((random.nextInt(8) == 0) ? 0xE9 + random.nextInt(200) : 0x20 + random.nextInt(95)));
		}
		return text.toString();
	}

	private static String hex(String text) {
		return HexFormat.of().formatHex(text.getBytes(StandardCharsets.UTF_8));
	}

}
